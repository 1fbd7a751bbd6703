with orders as (
    select * from {{ ref('fct_orders') }}
)

select
    customer_id,
    min(ordered_at) as first_order_at,
    max(ordered_at) as last_order_at,
    count(*) as order_count,
    coalesce(sum(net_usd) filter (where order_status not in ('cancelled', 'returned')), 0) as lifetime_usd
from orders
group by customer_id
