with signals as (
    select * from {{ ref('risk_order_signals') }}
)

select
    customer_id,
    count(*) as orders,
    sum(failed_attempts) as failed_attempts,
    sum(case when has_gift_card then 1 else 0 end) as gift_card_orders,
    least(100, 10 * sum(failed_attempts)
        + 20 * sum(case when is_new_customer and is_high_value then 1 else 0 end)) as risk_score
from signals
group by customer_id
