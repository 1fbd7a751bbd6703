-- The board's weekly numbers: two columns of the order table.
with orders as (
    select order_date, net_usd from {{ ref('fct_orders') }}
)

select
    cast(date_trunc('week', order_date) as date) as week,
    count(*) as orders,
    sum(net_usd) as revenue_usd
from orders
group by 1
