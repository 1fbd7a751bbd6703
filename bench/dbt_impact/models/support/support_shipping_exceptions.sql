-- Shipments still on the road after a week, for the agents to chase.
with shipments as (
    select order_id, carrier, shipped_at, delivered_at from {{ source('raw', 'shipments') }}
)

select
    order_id,
    carrier,
    shipped_at
from shipments
where delivered_at is null or delivered_at > shipped_at + interval '7 days'
