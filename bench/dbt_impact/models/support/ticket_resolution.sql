with tickets as (
    select * from {{ ref('stg_tickets') }}
    where closed_at is not null
)

select
    priority,
    ticket_category,
    count(*) as closed_tickets,
    round(avg(extract(epoch from closed_at - opened_at) / 3600.0), 1) as avg_hours_to_close,
    round(avg(csat_score), 2) as avg_csat
from tickets
group by priority, ticket_category
