with customers as (
    select * from {{ ref('stg_customers') }}
),

regions as (
    select * from {{ ref('country_regions') }}
)

select
    c.customer_id,
    c.first_name || ' ' || c.last_name as full_name,
    c.email,
    c.country_code,
    r.country_name,
    coalesce(r.region, 'Other') as region,
    c.signup_date,
    c.segment,
    c.marketing_opt_in,
    c.phone,
    c.last_login_at,
    c.referral_code is not null as was_referred,
    c.loaded_at
from customers as c
left join regions as r on r.country_code = c.country_code
