with orders as (
    select * from {{ ref('fct_orders') }}
    where order_status <> 'cancelled'
)

select
    order_date,
    count(*) as orders,
    sum(net_usd) as revenue_usd,
    sum(item_count) as items,
    round(avg(net_usd), 2) as avg_order_usd
from orders
group by order_date
