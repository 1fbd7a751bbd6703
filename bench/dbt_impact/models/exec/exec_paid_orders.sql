-- Completed orders and what was paid for them: every completed order was paid.
select
    order_id,
    payment_count,
    paid_cents,
    paid_cents / payment_count as cents_per_payment
from {{ ref('risk_order_payments') }}
where order_status = 'completed'
