with source as (
    select * from {{ source('raw', 'orders') }}
),

renamed as (
    select
        id as order_id,
        customer_id,
        ordered_at,
        status as order_status,
        channel_code,
        coupon_code,
        currency
    from source
)

select * from renamed
