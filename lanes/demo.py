"""Demo data for lanes: filled by the contracts demo's two live lanes (see contracts_app.demo)."""
