with customers as (
    select * from {{ ref('customers_public') }}
)

select
    country_code,
    max(country_name) as country_name,
    count(*) as customers
from customers
group by country_code
