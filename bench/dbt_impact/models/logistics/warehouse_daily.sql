with shipments as (
    select * from {{ ref('int_shipments_enriched') }}
)

select
    warehouse_code,
    cast(shipped_at as date) as ship_date,
    count(*) as shipments,
    sum(weight_grams) / 1000.0 as weight_kg
from shipments
group by warehouse_code, cast(shipped_at as date)
