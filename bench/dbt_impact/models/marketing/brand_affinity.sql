with items as (
    select order_id, product_id from {{ ref('stg_order_items') }}
),

products as (
    select product_id, brand from {{ ref('dim_products') }}
),

orders as (
    select order_id, customer_id from {{ ref('fct_orders') }}
)

select
    o.customer_id,
    p.brand,
    count(*) as lines
from items as i
inner join products as p on p.product_id = i.product_id
inner join orders as o on o.order_id = i.order_id
group by o.customer_id, p.brand
