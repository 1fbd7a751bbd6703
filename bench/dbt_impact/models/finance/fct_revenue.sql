with orders as (
    select * from {{ ref('fct_orders') }}
),

payments as (
    select * from {{ ref('int_payments_by_order') }}
),

fx as (
    select * from {{ ref('fx_rates') }}
),

joined as (
    select
        o.order_id,
        o.order_date,
        o.currency,
        o.net_usd,
        round(coalesce(p.paid_cents, 0) / 100.0 * fx.rate_to_usd, 2) as paid_usd,
        p.first_paid_at
    from orders as o
    left join payments as p on p.order_id = o.order_id
    left join fx on fx.currency = o.currency
    where o.order_status <> 'cancelled'
)

select
    order_id,
    order_date,
    currency,
    net_usd,
    paid_usd,
    net_usd - paid_usd as outstanding_usd,
    first_paid_at
from joined
