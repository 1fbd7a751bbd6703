with sessions as (
    select * from {{ ref('int_sessions_attributed') }}
    where utm_campaign is not null
)

select
    utm_campaign,
    count(*) as sessions,
    count(converted_order_id) as conversions,
    round(avg(pageviews), 2) as avg_pageviews,
    sum(case when is_paid then 1 else 0 end) as paid_sessions
from sessions
group by utm_campaign
