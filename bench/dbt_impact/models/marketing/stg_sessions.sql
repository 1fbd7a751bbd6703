with source as (
    select * from {{ source('raw', 'sessions') }}
),

renamed as (
    select
        id as session_id,
        customer_id,
        started_at,
        device,
        lower(utm_source) as utm_source,
        utm_campaign,
        pageviews,
        converted_order_id,
        user_agent,
        landing_page
    from source
)

select * from renamed
