with orders as (
    select * from {{ ref('fct_orders') }}
),

customers as (
    select customer_id, signup_date, segment from {{ ref('dim_customers') }}
),

paid as (
    select order_id, has_gift_card, payment_count from {{ ref('int_payments_by_order') }}
),

failures as (
    select * from {{ ref('risk_payment_failures') }}
)

select
    o.order_id,
    o.customer_id,
    o.ordered_at,
    o.net_usd,
    c.segment,
    coalesce(f.failed_attempts, 0) as failed_attempts,
    coalesce(p.has_gift_card, false) as has_gift_card,
    o.ordered_at < c.signup_date + interval '7 days' as is_new_customer,
    o.net_usd > 500 as is_high_value
from orders as o
inner join customers as c on c.customer_id = o.customer_id
left join paid as p on p.order_id = o.order_id
left join failures as f on f.order_id = o.order_id
