-- Orders placed and not yet shipped, straight from the raw order table.
with orders as (
    select id, ordered_at, status from {{ source('raw', 'orders') }}
)

select
    cast(ordered_at as date) as order_date,
    count(*) as waiting_orders
from orders
where status = 'placed'
group by cast(ordered_at as date)
