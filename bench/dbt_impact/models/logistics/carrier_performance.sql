with shipments as (
    select * from {{ ref('int_shipments_enriched') }}
    where is_delivered
)

select
    carrier,
    count(*) as shipments,
    round(avg(days_in_transit), 2) as avg_days_in_transit,
    round(avg(case when days_in_transit > 5 then 1.0 else 0.0 end), 3) as late_share
from shipments
group by carrier
