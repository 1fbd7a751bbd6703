-- The customer table other teams are told to read: a plain copy of dim_customers.
select * from {{ ref('dim_customers') }}
