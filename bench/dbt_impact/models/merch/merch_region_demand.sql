with items as (
    select order_id, product_id, quantity from {{ ref('stg_order_items') }}
),

orders as (
    select order_id, customer_id from {{ ref('fct_orders') }}
),

customers as (
    select customer_id, region from {{ ref('customers_public') }}
)

select
    c.region,
    i.product_id,
    sum(i.quantity) as units
from items as i
inner join orders as o on o.order_id = i.order_id
inner join customers as c on c.customer_id = o.customer_id
group by c.region, i.product_id
