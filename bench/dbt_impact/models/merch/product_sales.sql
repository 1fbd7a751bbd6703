with items as (
    select * from {{ ref('stg_order_items') }}
),

orders as (
    select order_id from {{ ref('fct_orders') }}
    where is_fulfilled
),

products as (
    select * from {{ ref('dim_products') }}
)

select
    p.product_id,
    p.category_group,
    p.category,
    sum(i.quantity) as units_sold,
    sum(i.line_total_cents) as revenue_cents,
    sum(i.line_total_cents - i.quantity * p.unit_cost_cents) as margin_cents
from items as i
inner join orders as o on o.order_id = i.order_id
inner join products as p on p.product_id = i.product_id
group by p.product_id, p.category_group, p.category
