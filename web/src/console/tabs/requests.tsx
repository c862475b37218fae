import { TabHeader } from '../ui/controls';

export function RequestsTab() {
  return <TabHeader title="Requests" />;
}
