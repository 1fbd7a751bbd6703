with source as (
    select * from {{ source('raw', 'payments') }}
),

renamed as (
    select
        id as payment_id,
        order_id,
        cast(method as text) as payment_method,
        cast(amount_cents as bigint) as amount_cents,
        status as payment_status,
        created_at as paid_at,
        processor_ref,
        card_last4
    from source
)

select * from renamed
