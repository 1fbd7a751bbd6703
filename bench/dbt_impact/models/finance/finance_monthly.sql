with revenue as (
    select * from {{ ref('fct_revenue') }}
)

select
    cast(date_trunc('month', order_date) as date) as month,
    count(*) as orders,
    sum(net_usd) as revenue_usd,
    sum(paid_usd) as paid_usd,
    sum(outstanding_usd) as outstanding_usd
from revenue
group by 1
