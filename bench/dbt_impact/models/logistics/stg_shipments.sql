with source as (
    select * from {{ source('raw', 'shipments') }}
),

renamed as (
    select
        id as shipment_id,
        order_id,
        carrier,
        case when carrier in ('dhl', 'ups') then 'express' else 'standard' end as service_level,
        shipped_at,
        delivered_at,
        warehouse_code,
        weight_grams,
        tracking_number,
        package_count
    from source
)

select * from renamed
