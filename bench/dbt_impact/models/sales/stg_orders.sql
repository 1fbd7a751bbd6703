with source as (
    select * from {{ source('raw', 'orders') }}
),

renamed as (
    select
        id as order_id,
        customer_id,
        ordered_at,
        status as order_status,
        cast(channel_code as varchar) as channel_code,
        coupon_code,
        cast(currency as text) as currency,
        sales_rep_code,
        ip_country,
        _loaded_at as loaded_at
    from source
)

select * from renamed
