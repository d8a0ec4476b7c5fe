INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments) SELECT 'r' || g, 'acme', 'alice', 'tools/call', 'noop', '{}' FROM generate_series(1,10000) g ON CONFLICT DO NOTHING;
