with source as (
    select * from {{ source('raw', 'products') }}
),

renamed as (
    select
        id as product_id,
        sku,
        name as product_name,
        category,
        brand,
        unit_cost_cents,
        is_active,
        launched_at,
        weight_grams,
        supplier_code
    from source
)

select * from renamed
