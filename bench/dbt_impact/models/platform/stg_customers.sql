with source as (
    select * from {{ source('raw', 'customers') }}
),

renamed as (
    select
        id as customer_id,
        first_name,
        last_name,
        lower(email) as email,
        upper(country_code) as country_code,
        signup_date,
        segment,
        marketing_opt_in,
        phone,
        last_login_at,
        referral_code,
        _loaded_at as loaded_at
    from source
    where not is_deleted
)

select * from renamed
