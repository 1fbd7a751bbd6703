with products as (
    select id, name, launched_at, is_active from {{ source('raw', 'products') }}
)

select
    id as product_id,
    name as product_name,
    cast(launched_at as date) as launch_date
from products
where is_active
