with products as (
    select * from {{ ref('stg_products') }}
)

select
    product_id,
    sku,
    product_name,
    category,
    case
        when category in ('electronics', 'home', 'garden', 'sports') then 'hard goods'
        else 'soft goods'
    end as category_group,
    brand,
    unit_cost_cents,
    is_active,
    weight_grams,
    supplier_code
from products
