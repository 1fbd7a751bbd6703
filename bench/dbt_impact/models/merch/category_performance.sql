with sales as (
    select * from {{ ref('product_sales') }}
)

select
    category_group,
    count(*) as products,
    sum(units_sold) as units_sold,
    sum(revenue_cents) as revenue_cents,
    round(100.0 * sum(margin_cents) / nullif(sum(revenue_cents), 0), 1) as margin_pct
from sales
group by category_group
