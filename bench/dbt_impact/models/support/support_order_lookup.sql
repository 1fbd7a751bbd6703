-- "Where is my order?": the agents' lookup table.
with orders as (
    select * from {{ ref('fct_orders') }}
)

select
    order_id,
    customer_id,
    ordered_at,
    order_status
from orders
