-- Marketing pulls its opt-in list straight from the raw customers table.
with customers as (
    select * from {{ source('raw', 'customers') }}
)

select
    id as customer_id,
    lower(email) as email,
    signup_date
from customers
where marketing_opt_in and not is_deleted
