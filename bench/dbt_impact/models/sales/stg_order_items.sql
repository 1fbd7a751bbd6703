with source as (
    select * from {{ source('raw', 'order_items') }}
),

renamed as (
    select
        id as order_item_id,
        order_id,
        product_id,
        quantity,
        unit_price_cents,
        discount_cents,
        gift_wrap,
        quantity * unit_price_cents - discount_cents as line_total_cents
    from source
)

select * from renamed
