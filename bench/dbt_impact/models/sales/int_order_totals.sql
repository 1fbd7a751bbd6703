with items as (
    select * from {{ ref('stg_order_items') }}
)

select
    order_id,
    count(*) as item_count,
    sum(quantity) as units,
    sum(quantity * unit_price_cents) as gross_cents,
    sum(discount_cents) as discount_cents,
    sum(line_total_cents) as net_cents
from items
group by order_id
