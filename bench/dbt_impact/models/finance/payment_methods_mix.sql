with payments as (
    select * from {{ ref('stg_payments') }}
)

select
    payment_method,
    count(*) as attempts,
    count(*) filter (where payment_status = 'success') as successes,
    coalesce(sum(amount_cents) filter (where payment_status = 'success'), 0) as collected_cents
from payments
group by payment_method
