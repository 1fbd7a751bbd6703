with source as (
    select * from {{ source('raw', 'tickets') }}
),

renamed as (
    select
        id as ticket_id,
        customer_id,
        order_id,
        opened_at,
        closed_at,
        cast(priority as text) as priority,
        coalesce(category, 'other') as ticket_category,
        csat_score,
        subject,
        agent_id
    from source
)

select * from renamed
