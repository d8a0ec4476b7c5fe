// Server-rendered pages of the console (hono/jsx: escaped by construction), one module per page
// under views/. The client script (assets.ts) only adds live updates and small conveniences:
// every page works without it.
export { Layout, LoginPage, MessagePage, StatusBadge } from './views/layout.js';
export { FilterForm, ListPage, TaskRowView, type ListQuery } from './views/list-page.js';
export { TaskPage } from './views/task-page.js';
export { BulkCancelPage } from './views/bulk-cancel-page.js';
export { HealthPage } from './views/health-page.js';
