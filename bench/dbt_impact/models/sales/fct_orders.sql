with orders as (
    select * from {{ ref('stg_orders') }}
),

totals as (
    select * from {{ ref('int_order_totals') }}
),

fx as (
    select * from {{ ref('fx_rates') }}
)

select
    o.order_id,
    o.customer_id,
    o.ordered_at,
    cast(o.ordered_at as date) as order_date,
    o.order_status,
    o.channel_code,
    o.coupon_code is not null as used_coupon,
    o.currency,
    coalesce(t.item_count, 0) as item_count,
    coalesce(t.net_cents, 0) as net_cents,
    round(coalesce(t.net_cents, 0) / 100.0 * fx.rate_to_usd, 2) as net_usd,
    o.order_status in ('completed', 'shipped') as is_fulfilled,
    o.sales_rep_code,
    o.ip_country,
    o.loaded_at
from orders as o
left join totals as t on t.order_id = o.order_id
left join fx on fx.currency = o.currency
