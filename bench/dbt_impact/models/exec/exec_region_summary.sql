with segments as (
    select * from {{ ref('customer_segments') }}
)

select
    region,
    count(*) as customers,
    sum(order_count) as orders,
    sum(lifetime_usd) as lifetime_usd,
    count(*) filter (where value_tier = 'high') as high_value_customers
from segments
group by region
