-- Payments joined on their order: a NULL payment order_id drops the payment here.
with orders as (
    select order_id, customer_id, order_status from {{ ref('fct_orders') }}
),

paid as (
    select * from {{ ref('int_payments_by_order') }}
)

select
    o.order_id,
    o.customer_id,
    o.order_status,
    p.payment_count,
    coalesce(p.paid_cents, 0) as paid_cents
from orders as o
left join paid as p on p.order_id = o.order_id
