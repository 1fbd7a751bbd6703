with payments as (
    select * from {{ ref('stg_payments') }}
    where payment_status = 'success'
)

select
    order_id,
    count(*) as payment_count,
    sum(amount_cents) as paid_cents,
    min(paid_at) as first_paid_at,
    bool_or(payment_method = 'gift_card') as has_gift_card
from payments
group by order_id
