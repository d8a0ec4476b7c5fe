INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments) VALUES (gen_random_uuid()::text, 'acme', 'alice', 'tools/call', 'noop', '{}');
