-- Every shipment of a public order has a known service level (logistics' and sales' models).
{{ config(meta={'owner_team': 'support'}) }}
select s.shipment_id
from {{ ref('stg_shipments') }} as s
inner join {{ ref('orders_public') }} as o on o.order_id = s.order_id
where s.service_level is null or s.service_level not in ('express', 'standard')
