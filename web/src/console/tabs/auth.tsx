import { TabHeader } from '../ui/controls';

export function AuthTab() {
  return <TabHeader title="Authentication" />;
}
