with tickets as (
    select customer_id, ticket_category, opened_at from {{ ref('stg_tickets') }}
    where ticket_category in ('refund', 'billing')
)

select
    customer_id,
    count(*) as money_tickets,
    max(opened_at) as last_money_ticket_at
from tickets
group by customer_id
