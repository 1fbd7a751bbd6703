-- Risk reads failed attempts straight from the raw payments table.
with payments as (
    select * from {{ source('raw', 'payments') }}
)

select
    order_id,
    count(*) as failed_attempts,
    max(created_at) as last_failed_at
from payments
where status = 'failed'
group by order_id
