with tickets as (
    select * from {{ ref('stg_tickets') }}
    where order_id is not null
),

shipments as (
    select * from {{ ref('int_shipments_enriched') }}
)

select
    t.ticket_id,
    t.order_id,
    t.ticket_category,
    t.priority,
    s.carrier,
    s.days_in_transit,
    coalesce(s.is_delivered, false) as is_delivered,
    coalesce(s.days_in_transit > 5, false) as was_late
from tickets as t
left join shipments as s on s.order_id = t.order_id
