with orders as (
    select * from {{ ref('orders_public') }}
    where order_status = 'returned'
),

paid as (
    select * from {{ ref('int_payments_by_order') }}
)

select
    o.order_id,
    o.customer_id,
    o.net_usd,
    p.paid_cents,
    coalesce(p.has_gift_card, false) as paid_with_gift_card
from orders as o
left join paid as p on p.order_id = o.order_id
