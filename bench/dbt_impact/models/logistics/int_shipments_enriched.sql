with shipments as (
    select * from {{ ref('stg_shipments') }}
),

orders as (
    select order_id, customer_id, ordered_at from {{ ref('fct_orders') }}
)

select
    s.shipment_id,
    s.order_id,
    o.customer_id,
    s.carrier,
    s.warehouse_code,
    s.weight_grams,
    s.shipped_at,
    s.delivered_at,
    round(extract(epoch from s.shipped_at - o.ordered_at) / 86400.0, 2) as days_to_ship,
    round(extract(epoch from s.delivered_at - s.shipped_at) / 86400.0, 2) as days_in_transit,
    s.delivered_at is not null as is_delivered,
    s.tracking_number,
    s.package_count
from shipments as s
inner join orders as o on o.order_id = s.order_id
