with monthly as (
    select * from {{ ref('finance_monthly') }}
)

select
    month,
    revenue_usd,
    paid_usd,
    round(100.0 * outstanding_usd / nullif(revenue_usd, 0), 2) as outstanding_pct
from monthly
