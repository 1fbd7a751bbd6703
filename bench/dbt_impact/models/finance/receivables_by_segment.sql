with revenue as (
    select order_id, outstanding_usd from {{ ref('fct_revenue') }}
),

orders as (
    select order_id, customer_id from {{ ref('fct_orders') }}
),

customers as (
    select customer_id, segment from {{ ref('customers_public') }}
)

select
    c.segment,
    count(*) as orders,
    sum(r.outstanding_usd) as outstanding_usd
from revenue as r
inner join orders as o on o.order_id = r.order_id
inner join customers as c on c.customer_id = o.customer_id
group by c.segment
