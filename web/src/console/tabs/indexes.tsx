import { TabHeader } from '../ui/controls';

export function IndexesTab() {
  return <TabHeader title="Indexes" />;
}
